// Peer for the pixel diff benchmark: decodes both PNGs with pngjs and runs pixelmatch
// (threshold 0.1), RUNS times in this process; prints the times in ms and the diff count.
const fs = require('fs');
const { PNG } = require('pngjs');
const pixelmatch = require('pixelmatch');
const [a, b, runs] = [process.argv[2], process.argv[3], parseInt(process.argv[4], 10)];
const times = [];
let count = 0;
for (let i = 0; i < runs; i++) {
  const t = process.hrtime.bigint();
  const img1 = PNG.sync.read(fs.readFileSync(a));
  const img2 = PNG.sync.read(fs.readFileSync(b));
  const out = new PNG({ width: img1.width, height: img1.height });
  count = pixelmatch(img1.data, img2.data, out.data, img1.width, img1.height, { threshold: 0.1 });
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
}
console.log(JSON.stringify({ times, count }));
