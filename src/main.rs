fn main() {
    std::process::exit(cua::run());
}
