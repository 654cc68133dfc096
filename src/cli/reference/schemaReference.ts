import { isPlainObject } from "../../util/isPlainObject.js";
import { headingSlug } from "./headingSlug.js";
import { markdownTable } from "./markdownTable.js";

type Schema = Record<string, unknown>;

/** What a key reference page is made of. */
export interface SchemaReferenceOptions {
  /** The page's title. */
  title: string;
  /** A paragraph under the title: which files have this format, and where to read more. */
  intro: string;
  /** Where the schema comes from, named in the page's "generated" note (a path in the repository). */
  source: string;
  schema: Schema;
}

/** One row of a section: a key's path from the section's object, and its schema. */
interface Row {
  path: string;
  schema: Schema;
  required: boolean;
}

/**
 * A reference page of a file format's keys from its JSON Schema: a table per object (the top level, then each
 * definition it refers to), each key with its type, default and description. Objects written inline are flattened
 * into their parent's table as dotted paths (`code_action.exec_timeout`, `steps[].agent`, `prices.*.input`); objects
 * referred to by `$ref` get a section of their own, linked from the type. A key without a description is an error
 * (the page would be a list of names), thrown with every such key named.
 */
export function schemaReference(options: SchemaReferenceOptions): string {
  const definitions = isPlainObject(options.schema.definitions) ? (options.schema.definitions as Record<string, Schema>) : {};
  const sections: Array<{ name: string; schema: Schema }> = [];
  const queued = new Set<string>();
  const missing: string[] = [];

  /** A `$ref`'s definition name, when it names an object with keys (a section of its own). */
  const sectionOf = (schema: Schema): string | undefined => {
    const name = refName(schema);
    if (name === undefined) return undefined;
    const target = definitions[name];
    if (target === undefined) throw new Error(`${options.source}: $ref ${String(schema.$ref)} names no definition`);
    const items = target.type === "array" && isPlainObject(target.items) ? (target.items as Schema) : undefined;
    if (items && refName(items) !== undefined) return sectionOf(items);
    if (!isPlainObject(target.properties)) return undefined;
    if (!queued.has(name)) {
      queued.add(name);
      sections.push({ name, schema: target });
    }
    return name;
  };

  const typeText = (schema: Schema): string => {
    const section = sectionOf(schema);
    if (section !== undefined) return `[${section}](#${headingSlug(section)})`;
    const name = refName(schema);
    if (name !== undefined) return typeText(definitions[name]!);
    if (Array.isArray(schema.enum)) return schema.enum.map((value) => `\`${JSON.stringify(value)}\``).join(" or ");
    if ("const" in schema) return `\`${JSON.stringify(schema.const)}\``;
    const alternatives = (Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined) as Schema[] | undefined;
    if (alternatives) return [...new Set(alternatives.map(typeText))].join(" or ");
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === "string" ? [schema.type] : [];
    if (types.length === 0) return "any";
    return types
      .map((type) => {
        if (type === "array" && isPlainObject(schema.items)) return `list of ${typeText(schema.items as Schema)}`;
        if (type === "array") return "list";
        if (type === "object" && isPlainObject(schema.additionalProperties) && !isPlainObject(schema.properties)) return `map of ${typeText(schema.additionalProperties as Schema)}`;
        return type;
      })
      .join(" or ");
  };

  /** The rows of an object's keys, inline objects flattened into dotted paths. */
  const rows = (schema: Schema, prefix: string): Row[] => {
    const found: Row[] = [];
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const properties = isPlainObject(schema.properties) ? (schema.properties as Record<string, Schema>) : {};
    for (const [key, child] of Object.entries(properties)) {
      const path = `${prefix}${key}`;
      found.push({ path, schema: child, required: required.has(key) });
      found.push(...nested(child, path));
    }
    return found;
  };

  /** The keys of an object written inline under `path` (itself, its list items, its map values, its alternatives). */
  const nested = (schema: Schema, path: string): Row[] => {
    // A definition with keys is a section of its own; one without (a string or an object) is read in place.
    const name = refName(schema);
    if (name !== undefined) return sectionOf(schema) === undefined ? nested(definitions[name]!, path) : [];
    if (isPlainObject(schema.properties)) return rows(schema, `${path}.`);
    if (isPlainObject(schema.items)) return nested(schema.items as Schema, `${path}[]`);
    if (isPlainObject(schema.additionalProperties)) return nested(schema.additionalProperties as Schema, `${path}.*`);
    const alternatives = (Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : []) as Schema[];
    return alternatives.flatMap((alternative) => nested(alternative, path));
  };

  const table = (schema: Schema, sectionName: string): string => {
    const lines = rows(schema, "").map((row) => {
      const description = descriptionOf(row.schema, definitions);
      if (description === undefined) missing.push(`${sectionName}: ${row.path}`);
      const defaultValue = "default" in row.schema ? `\`${JSON.stringify(row.schema.default)}\`` : "";
      return [`\`${row.path}\``, typeText(row.schema), defaultValue, `${row.required ? "**Required.** " : ""}${description ?? ""}`];
    });
    return markdownTable(["key", "type", "default", "description"], lines);
  };

  const parts = [`# ${options.title}`, `<!-- Generated by \`npm run docs\` from ${options.source}: edit the schema, not this page. -->`, options.intro];
  const top = table(options.schema, "the top level");
  parts.push(`## Top-level keys`, ...(typeof options.schema.description === "string" ? [options.schema.description] : []), top);
  // Sections are found while tables are made (a `$ref` queues its definition), so the queue grows as it is read.
  for (let index = 0; index < sections.length; index++) {
    const section = sections[index]!;
    const body = table(section.schema, section.name);
    parts.push(`## ${section.name}`, ...(typeof section.schema.description === "string" ? [section.schema.description] : []), body);
  }
  if (missing.length > 0) throw new Error(`${options.source}: these keys have no description, which the reference page needs:\n  ${missing.join("\n  ")}`);
  return `${parts.join("\n\n")}\n`;
}

function refName(schema: Schema): string | undefined {
  return typeof schema.$ref === "string" && schema.$ref.startsWith("#/definitions/") ? schema.$ref.slice("#/definitions/".length) : undefined;
}

/** A key's description: its own, else that of the definition it refers to, else its items'. */
function descriptionOf(schema: Schema, definitions: Record<string, Schema>): string | undefined {
  if (typeof schema.description === "string") return schema.description;
  const name = refName(schema);
  if (name !== undefined) return descriptionOf(definitions[name] ?? {}, definitions);
  return undefined;
}
