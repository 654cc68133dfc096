// The price table moved to providers/ (run-time budgets need it below the store); kept here for existing imports.
export { PriceTable, type ModelPrice, type TokenCounts } from "../providers/PriceTable.js";
