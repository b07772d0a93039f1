"""What a person sees. Rows are built once (rows: a record's views; runrows:
several records, diffs, the per-GPU summary; format: how one value reads,
and the mark of a flagged figure), then rendered: table (rich, fitted to the
console), text (the one text path: escaping, markdown, CSV), report (the
Reporter: where output goes, notes, progress), runs (show, side by side,
diff), plot (matplotlib)."""
