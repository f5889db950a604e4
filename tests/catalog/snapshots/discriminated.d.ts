// Generated from the effective tool contract. Unsupported shapes stay unknown.
// JSON Schema validation owns constraints; describe() exposes the original schema.
// Values enter the guest intact or reject when program-data admission is full.
type __OpenClaw_discriminated_Input = { kind?: "list" | "status" | "detail" };
type __OpenClaw_discriminated_Output0 = { rows: Array<string> };
type __OpenClaw_discriminated_Output1 = { id: string; total: number };
type __OpenClaw_discriminated_Output2 = { id: string; lines: Array<string>; total: number };
type __OpenClaw_discriminated_OutputByInput = {
"list": __OpenClaw_discriminated_Output0;
"status": __OpenClaw_discriminated_Output1;
"detail": __OpenClaw_discriminated_Output2;
};
declare function discriminated<const Input extends __OpenClaw_discriminated_Input>(input: Input): Promise<Input extends { "kind": infer Value } ? Value extends keyof __OpenClaw_discriminated_OutputByInput ? __OpenClaw_discriminated_OutputByInput[Value] : __OpenClaw_discriminated_Output0 | __OpenClaw_discriminated_Output1 | __OpenClaw_discriminated_Output2 : __OpenClaw_discriminated_Output0 | __OpenClaw_discriminated_Output1 | __OpenClaw_discriminated_Output2>;
declare function discriminated(input?: __OpenClaw_discriminated_Input): Promise<__OpenClaw_discriminated_Output0 | __OpenClaw_discriminated_Output1 | __OpenClaw_discriminated_Output2>;
