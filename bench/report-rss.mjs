// Loaded with `node --import`: reports the process's peak resident memory (KiB) and the CPU time it used (user +
// system, µs, all threads) on stderr when it exits.
process.on("exit", () => {
  const { user, system } = process.cpuUsage();
  process.stderr.write(`\nmaxrss_kib=${process.resourceUsage().maxRSS} cpu_us=${user + system}\n`);
});
