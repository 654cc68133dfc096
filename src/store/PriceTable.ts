// The price table moved to providers/ (run-time budgets need it below the store); kept here for existing imports.
export { PriceTable, BATCH_PRICE_SHARE, type ModelPrice, type TokenCounts } from "../providers/PriceTable.js";
