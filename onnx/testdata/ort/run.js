// Runs an ONNX model in ONNX Runtime for gocaffe's export tests.
//
//   node run.js job.json
//
// job.json: {"model": path, "inputs": [{"name", "shape", "file"}], "out": dir}
// Each input file holds little-endian float32 values; each output is written
// to out/<index>.bin the same way, and out/outputs.json lists the outputs'
// names and shapes in the model's order.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

async function main() {
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const session = await ort.InferenceSession.create(job.model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: job.optimize ? 'all' : 'disabled',
  });
  const feeds = {};
  for (const input of job.inputs) {
    const buf = fs.readFileSync(input.file);
    const data = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    feeds[input.name] = new ort.Tensor('float32', data, input.shape);
  }
  const results = await session.run(feeds);
  const listed = [];
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    fs.writeFileSync(path.join(job.out, i + '.bin'), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    listed.push({name: name, shape: t.dims.map(Number), type: t.type});
  });
  fs.writeFileSync(path.join(job.out, 'outputs.json'), JSON.stringify(listed));
}

main().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
