"""Demo 09: one artifact with a text, a JSON (data), a binary CSV (raw) and a URL part; each
checked with the part predicates."""

import csv
import io

import simple_a2a
from simple_a2a import Task

from .._common import Checks, title, url

check = Checks()
reporter = simple_a2a.client(url())
task = reporter.send("ACME Corp")
assert isinstance(task, Task), f"expected a task, got {task!r}"

title("The artifact")
check(len(task.artifacts) == 1, "the task has one artifact")
artifact = task.artifacts[0]
text, data, raw, link = artifact.parts
print(f"  {artifact.name}: {len(artifact.parts)} parts")

title("A text part")
print(f"  {text.text}")
check(text.is_text and not text.is_data, "Part.is_text")

title("A JSON part (Part.data)")
print(f"  {data.data}")
check(data.is_data and data.data["total_revenue"] == 3580, "Part.is_data, the JSON value intact")

title("A binary part (Part.raw): a CSV file")
rows = list(csv.DictReader(io.StringIO(raw.decoded_bytes().decode())))
print(f"  {raw.filename} ({raw.media_type}, {len(raw.decoded_bytes())} bytes): {rows}")
check(raw.is_raw and raw.is_file, "Part.is_raw (and is_file)")
check(raw.media_type == "text/csv" and raw.filename == "sales.csv", "media type and filename kept")
check(sum(int(row["revenue"]) for row in rows) == data.data["total_revenue"], "the CSV adds up")

title("A URL part (Part.url)")
print(f"  {link.url} ({link.media_type})")
check(link.is_url and not link.is_raw, "Part.is_url")
check(link.url.endswith(".pdf"), "the link points to the PDF")

reporter.close()
check.exit()
