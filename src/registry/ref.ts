/** The ref grammar lives in config (the registry depends on config, not the other way round). */
export * from "../config/ref.js";
