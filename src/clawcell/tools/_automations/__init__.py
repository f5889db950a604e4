"""The automations family: the `automations` tool over a store's jobs (its actions, schemas
and the JSON of jobs and runs); the scheduler that fires the jobs is `clawcell.automations`.

Internals of `clawcell.tools`; the public names are re-exported there."""
