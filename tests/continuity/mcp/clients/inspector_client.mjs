// The MCP Inspector CLI 2.x (`mcp-inspector --cli`, pinned in scripts/conformance) as a person
// or a CI job runs it: one process per request, the API key in `--header`, every argument as
// `--tool-arg key=<JSON>` (the CLI JSON-parses each value, so objects such as write_context and
// strings that look like numbers arrive as given). The scenario of scenario.mjs, one JSON line
// per call. HEYAIRA_ERA: the CLI's --protocol-era (legacy, its default for a URL, or auto).

import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { runScenario, settings } from './scenario.mjs';

const config = settings();
const era = process.env.HEYAIRA_ERA ?? 'legacy';
const launcher = join(config.tools, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
const TIMEOUT_MS = 30_000;

class InspectorFailed extends Error {
    constructor(exitCode, envelope, stderr) {
        super(envelope?.error?.message ?? `exit ${exitCode}: ${stderr.slice(-300)}`);
        this.code = `exit ${exitCode} (${envelope?.error?.code ?? "no envelope"})`;
        this.envelope = envelope;
    }
}

function inspector(apiKey, args) {
    const argv = [launcher, '--cli', config.url, '--transport', 'http', '--protocol-era', era];
    argv.push('--header', `Authorization: Bearer ${apiKey}`, '--format', 'json', ...args);
    return new Promise((resolve, reject) => {
        // process.execPath: the Node 22 this script runs on (the Inspector needs >= 22.19).
        const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'], timeout: TIMEOUT_MS });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', chunk => (stdout += chunk));
        child.stderr.on('data', chunk => (stderr += chunk));
        child.on('error', reject);
        child.on('close', exitCode => resolve({ exitCode, stdout, stderr }));
    });
}

// The error envelope is the last JSON line on stderr ({"error": {code, message}}).
function envelopeOf(stderr) {
    const lines = stderr.trim().split('\n').reverse();
    for (const line of lines) {
        try {
            return JSON.parse(line);
        } catch {
            continue;
        }
    }
    return null;
}

// `--format json` prints {"result": ...} on stdout; a tool result with isError:true also exits 5
// (tool_is_error) after printing it, which is the CLI's way to report a tool error.
async function request(apiKey, args) {
    const { exitCode, stdout, stderr } = await inspector(apiKey, args);
    let printed = null;
    try {
        printed = stdout.trim() ? JSON.parse(stdout) : null;
    } catch {
        printed = null;
    }
    const toolError = exitCode === 5 && envelopeOf(stderr)?.error?.code === 'tool_is_error';
    if ((exitCode === 0 || toolError) && printed?.result !== undefined) {
        return printed.result;
    }
    throw new InspectorFailed(exitCode, envelopeOf(stderr), stderr);
}

// The CLI prints no era; results of the 2026-07-28 era carry the server's info in _meta.
const MODERN_META = 'io.modelcontextprotocol/serverInfo';

async function connect(apiKey) {
    let lastCall = null;
    return {
        era: () => (lastCall === null ? null : MODERN_META in (lastCall._meta ?? {}) ? 'modern' : 'legacy'),
        listTools: () => request(apiKey, ['--method', 'tools/list', '--strict']),
        callTool: async (name, args) => {
            const pairs = Object.entries(args).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
            const toolArgs = pairs.length > 0 ? ['--tool-arg', ...pairs] : [];
            lastCall = await request(apiKey, ['--method', 'tools/call', '--tool-name', name, ...toolArgs]);
            return lastCall;
        },
        close: async () => {}
    };
}

await runScenario({ connect, apiKey: config.apiKey, viewerKey: config.viewerKey, run: config.run });
