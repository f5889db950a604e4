// Generated from the effective tool contract. Unsupported shapes stay unknown.
// JSON Schema validation owns constraints; describe() exposes the original schema.
// Values enter the guest intact or reject when program-data admission is full.
declare function unions(input: { mode: "fast" | "slow"; value?: string | number }): Promise<({ kind: "a" }) | ({ kind: "b"; n: number })>;
