import v8 from "node:v8";
import vm from "node:vm";

type Gc = (options?: { type?: "minor" | "major" }) => void;

let gc: Gc | null | undefined;

/**
 * Ask V8 for a young-generation collection (a scavenge: a few ms). For code that streams many megabytes through
 * buffers while allocating little else, as a download written to a file: each chunk's memory is outside V8's heap
 * and freed only when V8 collects its buffer object, which it does not until its own heap fills or the chunks pass
 * 64 MB; meanwhile they pile up in the C heap, which keeps its high-water mark. A scavenge now and then frees them
 * as they go. `gc` is reached through a context made after `--expose-gc` is set (it adds nothing else); where that
 * is refused, nothing is done.
 */
export function collectYoungGarbage(): void {
  if (gc === undefined) {
    try {
      v8.setFlagsFromString("--expose-gc");
      gc = vm.runInNewContext("gc") as Gc;
    } catch {
      gc = null;
    }
  }
  gc?.({ type: "minor" });
}
