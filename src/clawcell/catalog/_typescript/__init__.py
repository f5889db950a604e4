"""What the model reads about tools, written as TypeScript: full declarations of schemas, the
compact hints, the per-tool `.d.ts` files behind `API.read`, and the quick index.

Internals of `clawcell.catalog`; the public names are re-exported there."""
