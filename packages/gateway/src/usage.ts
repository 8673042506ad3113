/** `sluice --help`. */
export const USAGE = `Usage: sluice <command> [options]

Commands:
  init     Write a starter config (loopback, an API key from SLUICE_API_KEY) and
           its JSON Schema beside it; --force overwrites an existing file.
  create plugin <name> [--dir <folder>]
           Write a plugin package to publish (package.json with @sluice/core as
           a peer, tsconfig, src/index.ts, src/handler.ts, a test) in a new
           folder (default: the name without its scope); never into one that exists.
  serve    Start the gateway: import the upstreams, then listen (HTTP and/or stdio).
           SIGINT or SIGTERM stops it, letting running calls finish.
  check    Validate the config, import every upstream, and print the tools that
           would be exposed, those skipped and why, each upstream's health and,
           with plugins.risk, each tool's risk level, floors and scan hits.
  schema   Print the JSON Schema of the config file, or write it with --out.
  ledger list | diff <tool> | approve <tool> | revoke <tool>
           The running gateway's risk ledger, through its admin API ("admin" in
           the config): list every tool with its lifecycle, show how a changed
           tool's definition differs from the approved one, approve it, or
           revoke it. <tool> as clients see it, or <upstream>/<tool>. The API
           key comes from SLUICE_ADMIN_KEY.
  approvals list | approve <id> [--reason <text>] | deny <id> --reason <text>
           The calls waiting for a person (with a Redis store, every replica's
           operator questions), and an operator's answer to one, by the id list
           shows; a denial's reason is what the caller reads. Through the admin
           API, with the key from SLUICE_ADMIN_KEY.
  credentials list | revoke | rotate
           The running gateway's vault of upstream grants (per_user), through
           its admin API: list who is connected to which upstream (never a
           token), revoke grants (--upstream, --subject or both; the caller is
           asked to connect again), or reseal every grant with the first vault
           key after a rotation. The API key comes from SLUICE_ADMIN_KEY.
  audit export | verify
           The running gateway's audit log of decisions, through its admin API:
           export every kept entry as JSON Lines (--after <n>: entries after
           number n), or verify the hash chain: exit 1 when an entry was
           modified, deleted or moved. The key comes from SLUICE_ADMIN_KEY.

Options:
  -c, --config <file>  The config file (default: sluice.config.json).
      --json           check, ledger, approvals, credentials, audit verify: print JSON.
      --force          init: overwrite an existing config.
      --dir <folder>   create: the folder to write (it must not exist).
      --url <url>      ledger, approvals, credentials, audit: the gateway's address (default: listen.http).
      --reason <text>  approvals approve, deny: why (the caller reads it).
      --upstream <u>   credentials: only this upstream's grants.
      --subject <s>    credentials: only this caller's grants.
      --after <n>      audit export: start after entry number n.
  -o, --out <file>     schema: write the schema to <file> (point "$schema" at it).
      --log-format <f>  serve: auto (readable on a terminal, else JSON), json or pretty.
      --log-level <l>   serve: fatal, error, warn, info, debug, trace or silent.
  -h, --help           Show this help.
  -v, --version        Show the version.

In the config, "\${NAME}" is replaced by the environment variable NAME (an error
if it is not set) and "\${NAME:-fallback}" by NAME or the fallback; a number or
boolean field takes such a string too.

Exit codes: 0 ok; 1 runtime failure (cannot listen; check: an upstream is
unreachable; audit verify: the chain was tampered with); 2 bad usage or bad config.
`;
