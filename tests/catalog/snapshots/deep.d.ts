// Generated from the effective tool contract. Unsupported shapes stay unknown.
// JSON Schema validation owns constraints; describe() exposes the original schema.
// Values enter the guest intact or reject when program-data admission is full.
declare function deep(input: { level7: { level6: { level5: { level4: { level3: { level2: { level1: { level0: number } } } } } } } }): Promise<{ level7: { level6: { level5: { level4: { level3: { level2: { level1: { level0: number } } } } } } } }>;
