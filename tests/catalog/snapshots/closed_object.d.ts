// Generated from the effective tool contract. Unsupported shapes stay unknown.
// JSON Schema validation owns constraints; describe() exposes the original schema.
// Values enter the guest intact or reject when program-data admission is full.
declare function closed_object(input: { id: string; limit: number /* integer, >= 1 */ }): Promise<{ ok: boolean }>;
