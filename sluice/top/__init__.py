"""sluice-top: a live terminal view of a Redis-protocol server's streams (Sluice or Redis).

`sample` reads the server (INFO, SCAN TYPE stream in pages, XINFO pipelined), `history`
keeps the rates between samples for the sparklines, `ordering` sorts and filters,
`view` draws with rich, `cli` is the console script (and its `--once --json`)."""
