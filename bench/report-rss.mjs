// Loaded with `node --import`: reports the process's peak resident memory (KiB) on stderr when it exits.
process.on("exit", () => process.stderr.write(`\nmaxrss_kib=${process.resourceUsage().maxRSS}\n`));
