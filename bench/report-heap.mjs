// Loaded with `node --expose-gc --import`: every second, a full collection, then the live heap (what the process
// really keeps, not what the collector has yet to free); the largest seen is reported on stderr at exit. Peak RSS
// also counts garbage waiting for the collector, whose amount V8 lets grow with the allocation rate.
let peak = 0;
const sample = () => {
  globalThis.gc?.();
  peak = Math.max(peak, process.memoryUsage().heapUsed);
};
setInterval(sample, 1000).unref();
process.on("exit", () => process.stderr.write(`\nlive_heap_peak_kib=${Math.round(peak / 1024)}\n`));
