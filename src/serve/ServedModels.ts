import type { PreparedTactic } from "../tactics/prepareTactic.js";

/** A tactic served as a model. */
export interface ServedModel {
  /** What clients name as `model`: the tactic's name, or its ref (`pkg.tactics:name`) when names clash. */
  id: string;
  prepared: PreparedTactic;
  /** Seconds since the epoch: when the server loaded it (`created` of `/v1/models`). */
  created: number;
  /** The tactic's `description`. */
  description: string | undefined;
}

/** A tactic to serve, and the ref it was found under when it came from a package. */
export interface TacticToServe {
  prepared: PreparedTactic;
  /** `pkg.tactics:name`, when known: the model's id when two tactics have the same name. */
  ref?: string;
}

/** The served tactics by model id. */
export class ServedModels {
  readonly #byId = new Map<string, ServedModel>();

  constructor(given: TacticToServe[], now = Date.now()) {
    // One tactic file given twice (a path and its package, or the same path) is one model, not a clash with itself;
    // the one reached through a package keeps its ref.
    const byFile = new Map<string, TacticToServe>();
    for (const tactic of given) {
      const seen = byFile.get(tactic.prepared.tactic.file);
      if (seen === undefined || (seen.ref === undefined && tactic.ref !== undefined)) byFile.set(tactic.prepared.tactic.file, tactic);
    }
    const tactics = [...byFile.values()];
    const nameOf = (tactic: TacticToServe): string => tactic.prepared.tactic.config.name ?? tactic.prepared.tactic.file.replace(/^.*[\\/]/, "").replace(/\.(ya?ml|json|[cm]?[jt]s)$/, "");
    const counts = new Map<string, number>();
    for (const tactic of tactics) counts.set(nameOf(tactic), (counts.get(nameOf(tactic)) ?? 0) + 1);
    for (const tactic of tactics) {
      const name = nameOf(tactic);
      // A clash is resolved by refs, or, for files outside packages, by their paths: every id stays unique.
      const id = counts.get(name)! > 1 ? (tactic.ref ?? tactic.prepared.tactic.file) : name;
      if (this.#byId.has(id)) continue; // the same tactic named twice
      this.#byId.set(id, { id, prepared: tactic.prepared, created: Math.floor(now / 1000), description: tactic.prepared.tactic.config.description });
    }
  }

  get(id: string): ServedModel | undefined {
    return this.#byId.get(id);
  }

  list(): ServedModel[] {
    return [...this.#byId.values()];
  }

  get ids(): string[] {
    return [...this.#byId.keys()];
  }
}
