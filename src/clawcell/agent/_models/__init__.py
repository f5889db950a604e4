"""The model adapters: Anthropic Messages, OpenAI Chat Completions and Responses, the scripted
model, and the SDK-call plumbing (options, retries, API error names) only they use.

Internals of `clawcell.agent`; the public names are re-exported there."""
