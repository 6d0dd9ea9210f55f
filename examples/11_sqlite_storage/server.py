"""Demo 11: a note-taking agent whose tasks live in a SQLite file (``--db PATH``).

Without a note, the agent asks for one (input-required): an interrupted task that must survive
a restart too.
"""

from simple_a2a.server import RequestContext, agent, server

from .._common import argument, card, serve, skill


@agent
async def notes(ctx: RequestContext) -> str | None:
    note = ctx.text.removeprefix("note:").strip()
    if not note:
        await ctx.require_input("What should I write down?")
        return None
    return f"Noted: {note}"


CARD = card("Notes", "Writes your notes down.", skill("note", "Take a note", "note: buy milk"))

if __name__ == "__main__":
    db = argument("--db", "notes.db")
    print(f"storage: sqlite:///{db}", flush=True)
    serve(server(CARD, notes, storage=f"sqlite:///{db}"))
