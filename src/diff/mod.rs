//! Diffing trajectories. So far: [`pixels`], the perceptual screenshot diff. Pure
//! functions over decoded images; the report layer decides what counts as a failure.

pub mod pixels;
