import { BridgeError } from "../sandbox/BridgeError.js";
import { isPlainObject } from "../tools/JsonSchema.js";
import type { ArtifactStore } from "./ArtifactStore.js";

/**
 * A program's final answer as the run gives it. References stay references, `{"$artifact": ref}`, at any depth:
 * seed 001's script returns `{"chart": chart_ref}`, and a stored file's bytes (or a large result's whole text) must
 * not be pasted into the answer, where they would land on stdout or in the model's tool result; `--json` lists each
 * artifact with its file. An answer that is one handle to text or JSON data is that data, since the program answered
 * with the value itself (`final_answer(report)`). A ref this run does not hold raises KeyError in the program.
 */
export function answerValue(value: unknown, store: ArtifactStore): unknown {
  checkRefs(value, store);
  const ref = artifactRef(value);
  const record = ref === undefined ? undefined : store.get(ref);
  return record && store.holdsData(record) ? store.load(record) : value;
}

function checkRefs(value: unknown, store: ArtifactStore): void {
  if (Array.isArray(value)) {
    for (const item of value) checkRefs(item, store);
    return;
  }
  if (!isPlainObject(value)) return;
  const ref = artifactRef(value);
  if (ref !== undefined) {
    if (!store.get(ref)) throw new BridgeError("KeyError", `no artifact ${JSON.stringify(ref)} in this run (return a handle a function gave, or one from artifacts.put)`);
    return;
  }
  for (const item of Object.values(value)) checkRefs(item, store);
}

/** The ref of `{"$artifact": ref}` (an object with that one key), the form handles travel in. */
function artifactRef(value: unknown): unknown {
  if (!isPlainObject(value)) return undefined;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === "$artifact" ? value.$artifact : undefined;
}
