"""Demo 09: a report agent whose one artifact holds four kinds of part."""

from simple_a2a import Artifact, Part
from simple_a2a.server import RequestContext, agent, server

from .._common import card, serve, skill

SALES_CSV = b"region,quarter,revenue\nnorth,Q1,1200\nsouth,Q1,950\neast,Q1,1430\n"


@agent
async def reporter(ctx: RequestContext) -> Artifact:
    return Artifact.of(
        [
            Part.text(f"Quarterly report for {ctx.text}: revenue is up in every region."),
            Part.data({"quarter": "Q1", "regions": 3, "total_revenue": 3580, "currency": "EUR"}),
            Part.raw(SALES_CSV, media_type="text/csv", filename="sales.csv"),
            Part.url(
                "https://example.com/reports/q1.pdf",
                media_type="application/pdf",
                filename="q1.pdf",
            ),
        ],
        name="quarterly-report",
    )


CARD = card(
    "Reporter",
    "Builds a report: a summary, figures as JSON, a CSV file and a link to the PDF.",
    skill("report", "Build a quarterly report", "ACME Corp"),
)

if __name__ == "__main__":
    serve(server(CARD, reporter))
