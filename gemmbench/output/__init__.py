"""What a person sees: tables (report), saved runs side by side and diffs
(runs), and plots (plot)."""
