/**
 * The store's database types. They are defined in src/schema/database.ts, below transform, so that
 * transform can name the rows it produces without importing the store (the layers only import
 * downwards); the store and every stage above it import them from here.
 */
export type * from '../schema/database.js';
