const vm = require("vm"), fs = require("fs"), path = require("path"), Module = require("module");
const file = path.resolve(process.argv[2]); const cacheFile = "/tmp/cc-" + path.basename(file) + ".bin";
const src = fs.readFileSync(file, "utf8");
const wrapper = Module.wrap(src);
let cached; try { cached = fs.readFileSync(cacheFile); } catch {}
const script = new vm.Script(wrapper, { filename: file, cachedData: cached, importModuleDynamically: undefined });
const m = new Module(file, module); m.filename = file; m.paths = Module._nodeModulePaths(path.dirname(file));
const fn = script.runInThisContext();
fn.call(m.exports, m.exports, (id) => m.require(id), m, file, path.dirname(file));
if (process.argv[3] === "z") m.exports.z.object({ a: m.exports.z.string() });
if (!cached || script.cachedDataRejected) fs.writeFileSync(cacheFile, script.createCachedData());
