export { lllmHome } from "../config/lllmHome.js";
export { Registry, type PackageSource, type RegistryOptions, type ResolveOptions, type ResolvedTool } from "./Registry.js";
export { Package, type FileEntry, type ToolEntry } from "./Package.js";
export { readManifest, type PackageManifest, type DependencySpec } from "./manifest.js";
export { parseRef, formatRef, looksLikeQualifiedRef, SECTIONS, type Ref, type Section } from "./ref.js";
export { importModule } from "./importModule.js";
