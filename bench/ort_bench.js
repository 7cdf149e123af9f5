// onnxruntime's side of `tg bench onnx`: runs MODEL on the float32 input in
// IN_BIN (raw, C order) with THREADS intra-op threads, warm, and prints one
// JSON line with the median wall and CPU time per run; writes the first output (raw
// float32) to OUT_BIN so tg can compare the outputs.
//   node ort_bench.js MODEL INPUT_NAME SHAPE(d0,d1,..) IN_BIN THREADS RUNS OUT_BIN
// The package is found through NODE_PATH (tg sets it to TG_ORT_DIR/node_modules).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [model, inputName, shapeArg, inBin, threadsArg, runsArg, outBin] = process.argv.slice(2);
  if (!outBin) {
    console.error('usage: node ort_bench.js MODEL INPUT_NAME SHAPE IN_BIN THREADS RUNS OUT_BIN');
    process.exit(2);
  }
  const shape = shapeArg.split(',').map(Number);
  const buf = fs.readFileSync(inBin);
  const data = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threadsArg), interOpNumThreads: 1,
    executionProviders: ['cpu'], graphOptimizationLevel: 'all',
  });
  const feeds = {[inputName]: new ort.Tensor('float32', data, shape)};
  let out;
  // warm up as tg bench onnx does: at least 3 runs and 300 ms
  const warmUntil = process.hrtime.bigint() + 300000000n;
  for (let i = 0; i < 3 || process.hrtime.bigint() < warmUntil; i++) out = await session.run(feeds);
  const times = [], cpu = [];
  for (let i = 0; i < Number(runsArg); i++) {
    const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
    out = await session.run(feeds);
    const c = process.cpuUsage(c0); // the process's CPU time, us: robust to load at 1 thread
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    cpu.push((c.user + c.system) / 1e3);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const first = out[session.outputNames[0]];
  fs.writeFileSync(outBin, Buffer.from(new Float32Array(first.data).buffer));
  console.log(JSON.stringify({ort_ms: times[Math.floor(times.length / 2)],
                              ort_cpu_ms: cpu[Math.floor(cpu.length / 2)], runs: times.length,
                              ort_version: require('onnxruntime-node/package.json').version}));
}
main().catch((e) => { console.error(String(e)); process.exit(1); });
