import type { ValidateFunction } from "ajv/dist/2020.js";
import { sharedAjv } from "../../util/sharedAjv.js";
import { stripFence } from "../../util/stripFence.js";
import { verdict, type AssertionHandler } from "./AssertionHandler.js";

const compiled = new WeakMap<object, ValidateFunction>();

/** `json-schema: {...}`: the answer (parsed as JSON when it is text) matches the schema. */
export const jsonSchema: AssertionHandler = (value, { run }) => {
  let data = run.output;
  if (typeof data === "string") {
    try {
      data = JSON.parse(stripFence(data)) as unknown;
    } catch (error) {
      return verdict(false, `the answer is not JSON: ${(error as Error).message}`, { expected: "JSON matching the schema", actual: run.output as string });
    }
  }
  const schema = value as object;
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = sharedAjv().compile(schema)));
  // A copy: the shared validator fills in defaults, and the run's own answer must stay as it was.
  if (validate(structuredClone(data))) return verdict(true, "the answer matches the JSON Schema");
  const problems = (validate.errors ?? []).map((error) => `${error.instancePath || "the answer"} ${error.message ?? "is not valid"}`);
  return verdict(false, `the answer does not match the JSON Schema: ${[...new Set(problems)].join("; ")}`, { expected: JSON.stringify(schema), actual: JSON.stringify(data, null, 2) });
};
