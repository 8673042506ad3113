/** `sluice --help`. */
export const USAGE = `Usage: sluice <command> [options]

Commands:
  serve    Start the gateway: import the upstreams, then listen (HTTP and/or stdio).
           SIGINT or SIGTERM stops it, letting running calls finish.
  check    Validate the config, import every upstream, and print the tools that
           would be exposed, those skipped and why, each upstream's health and,
           with plugins.risk, each tool's risk level, floors and scan hits.
  schema   Print the JSON Schema of the config file, or write it with --out.

Options:
  -c, --config <file>  The config file (default: sluice.config.json).
      --json           check: print the report as JSON.
  -o, --out <file>     schema: write the schema to <file> (point "$schema" at it).
  -h, --help           Show this help.
  -v, --version        Show the version.

In the config, "\${NAME}" is replaced by the environment variable NAME (an error
if it is not set) and "\${NAME:-fallback}" by NAME or the fallback; a number or
boolean field takes such a string too.

Exit codes: 0 ok; 1 runtime failure (cannot listen; check: an upstream is
unreachable); 2 bad usage or bad config.
`;
