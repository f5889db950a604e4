"""The sub-agents: profiles, the `sessions_spawn` family of tools, the runs they start, the
stored book of runs and the registry that drives, resumes and cancels them.

Internals of `clawcell.agent`; the public names are re-exported there."""
