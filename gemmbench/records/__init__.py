"""Run records: the data (results), writing them as rows land (writer),
reading them back validated (store), and comparing two (diff)."""
