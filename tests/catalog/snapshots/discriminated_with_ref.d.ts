// Generated from the effective tool contract. Unsupported shapes stay unknown.
// JSON Schema validation owns constraints; describe() exposes the original schema.
// Values enter the guest intact or reject when program-data admission is full.
// Reference-bearing or structurally complex schemas retain the complete output union.
declare function discriminated_with_ref(input: { kind: string }): Promise<unknown>;
