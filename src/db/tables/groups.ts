/** Tables of the groups feature (merged into Database in ../schema.ts). */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface GroupsTables {}
