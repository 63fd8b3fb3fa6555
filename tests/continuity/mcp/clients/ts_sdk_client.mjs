// The TypeScript SDK 1.x (`@modelcontextprotocol/sdk`, pinned in scripts/conformance) over
// Streamable HTTP with an API key: the scenario of scenario.mjs, one JSON line per call.
// Run with the Node 22 from .tools (see tests/continuity/mcp/test_typescript_clients.py).

import { importPackage, runScenario, settings } from './scenario.mjs';

const config = settings();
const { Client } = await importPackage(config.tools, '@modelcontextprotocol/sdk', './client/index.js');
const { StreamableHTTPClientTransport } = await importPackage(
    config.tools,
    '@modelcontextprotocol/sdk',
    './client/streamableHttp.js'
);

async function connect(apiKey) {
    const client = new Client({ name: `heyaira-test-${config.run}`, version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: { Authorization: `Bearer ${apiKey}` } }
    });
    await client.connect(transport);
    return {
        listTools: () => client.listTools(),
        callTool: (name, args) => client.callTool({ name, arguments: args }),
        close: () => client.close()
    };
}

await runScenario({ connect, apiKey: config.apiKey, viewerKey: config.viewerKey, run: config.run });
