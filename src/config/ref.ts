/** The sections a package may have; each is a folder of the package and a part of a ref. */
export const SECTIONS = ["tools", "proxies", "tactics", "prompts"] as const;
export type Section = (typeof SECTIONS)[number];

/**
 * A parsed ref. `pkg.tools:get_weather` has a package; a bare `get_weather` does not. Tactic refs may pick one
 * of a tactic's tools after `#` (`pkg.tactics:review#summarise`).
 */
export interface Ref {
  package?: string;
  section?: Section;
  key: string;
  /** The part after `#`, for `pkg.tactics:name#tool`. */
  member?: string;
  /** The text as written. */
  text: string;
}

const QUALIFIED = /^(?<package>[A-Za-z0-9_][A-Za-z0-9_.-]*)\.(?<section>[A-Za-z]+):(?<key>[^#\s]+)(?:#(?<member>[^#\s]+))?$/;
const BARE = /^(?<key>[^\s:#./\\][^\s:#/\\]*)(?:#(?<member>[^#\s]+))?$/;

/** Parse a ref; returns undefined for text that is neither a qualified ref nor a bare name. */
export function parseRef(text: string): Ref | undefined {
  const qualified = QUALIFIED.exec(text);
  if (qualified?.groups) {
    const section = qualified.groups.section as Section;
    if (!(SECTIONS as readonly string[]).includes(section)) return undefined;
    return {
      package: qualified.groups.package!,
      section,
      key: qualified.groups.key!,
      ...(qualified.groups.member ? { member: qualified.groups.member } : {}),
      text,
    };
  }
  const bare = BARE.exec(text);
  if (bare?.groups) return { key: bare.groups.key!, ...(bare.groups.member ? { member: bare.groups.member } : {}), text };
  return undefined;
}

/** True for text shaped like `pkg.section:key` (used to tell a `base:` ref from a relative path). */
export function looksLikeQualifiedRef(text: string): boolean {
  return QUALIFIED.test(text);
}

export function formatRef(packageName: string, section: Section, key: string): string {
  return `${packageName}.${section}:${key}`;
}
