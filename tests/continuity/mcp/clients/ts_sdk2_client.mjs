// The TypeScript SDK 2.x client (`@modelcontextprotocol/client`, pinned in scripts/conformance)
// over Streamable HTTP with an API key: the scenario of scenario.mjs, one JSON line per call.
// HEYAIRA_ERA picks the version negotiation: "legacy" (the 2.x default: the 2025 initialize
// handshake) or "auto" (probes server/discover and speaks the 2026-07-28 era when offered).

import { importPackage, runScenario, settings } from './scenario.mjs';

const config = settings();
const era = process.env.HEYAIRA_ERA ?? 'legacy';
const { Client, StreamableHTTPClientTransport } = await importPackage(config.tools, '@modelcontextprotocol/client');

async function connect(apiKey) {
    const client = new Client({ name: `heyaira-test-${config.run}`, version: '1.0.0' }, { versionNegotiation: { mode: era } });
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: { Authorization: `Bearer ${apiKey}` } }
    });
    await client.connect(transport);
    return {
        era: () => client.getProtocolEra?.(),
        listTools: () => client.listTools(),
        callTool: (name, args) => client.callTool({ name, arguments: args }),
        close: () => client.close()
    };
}

await runScenario({ connect, apiKey: config.apiKey, viewerKey: config.viewerKey, run: config.run });
