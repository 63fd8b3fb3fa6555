"""The portable project bundle (docs/bundle.md): one JSON Lines file that carries a project out
of one HeyAira instance and into another, with the proof that nothing was edited on the way.

- `format`: the line encoding, the seals and the trailer, writing and checking them;
- `records`: which fields each record type carries, read from the database;
- `export`: a project's bundle as a stream of lines;
- `load`: a checked bundle put into the database, all or nothing.
"""
