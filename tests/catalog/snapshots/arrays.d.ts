// Generated from the effective tool contract. Unsupported shapes stay unknown.
// JSON Schema validation owns constraints; describe() exposes the original schema.
// Values enter the guest intact or reject when program-data admission is full.
declare function arrays(input: { tags: Array<string> }): Promise<Array<{ id: string; scores: Array<number> }>>;
