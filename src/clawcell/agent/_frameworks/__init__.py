"""The framework integrations: code mode's `exec`/`wait` as tools of LangChain, the OpenAI
Agents SDK, Pydantic AI and Anthropic's tool runner, and the answers they share.

Internals of `clawcell.agent`; the public names are re-exported there."""
