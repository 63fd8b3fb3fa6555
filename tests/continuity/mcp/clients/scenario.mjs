// The calls every TypeScript-side client makes against a live HeyAira server, for
// tests/continuity/mcp/test_typescript_clients.py: tools/list, every tool once with valid arguments, then
// each pinned error code a client can provoke. One JSON line per call on stdout says what the
// client received (isError, the error's code and fields) or the exception it threw; the test
// judges the lines, this module only reports them.
//
// Input (environment): HEYAIRA_MCP_URL, HEYAIRA_API_KEY (a contributor or owner key),
// HEYAIRA_VIEWER_API_KEY (a viewer's key in the same project), HEYAIRA_RUN (a label that keeps
// this run's keys and names apart from other runs against the same server) and
// HEYAIRA_NODE_TOOLS (the directory whose node_modules holds the pinned packages).

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const TOOL_NAMES = [
    'server_identity',
    'continuity_context',
    'memory_get',
    'memory_search',
    'task_get',
    'task_list',
    'state_get',
    'memory_add',
    'task_create',
    'task_update',
    'task_claim_next',
    'task_heartbeat',
    'state_put'
];

export function settings() {
    const names = ['HEYAIRA_MCP_URL', 'HEYAIRA_API_KEY', 'HEYAIRA_VIEWER_API_KEY', 'HEYAIRA_RUN', 'HEYAIRA_NODE_TOOLS'];
    const missing = names.filter(name => !process.env[name]);
    if (missing.length > 0) {
        throw new Error(`missing environment: ${missing.join(', ')}`);
    }
    return {
        url: process.env.HEYAIRA_MCP_URL,
        apiKey: process.env.HEYAIRA_API_KEY,
        viewerKey: process.env.HEYAIRA_VIEWER_API_KEY,
        run: process.env.HEYAIRA_RUN,
        tools: process.env.HEYAIRA_NODE_TOOLS
    };
}

// The scripts live in the repository, the packages in .tools/: bare ESM imports resolve from the
// importing file, so the package's own `exports` map is read to import its ESM entry point.
export async function importPackage(tools, name, subpath = '.') {
    const root = join(tools, 'node_modules', name);
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    let target = manifest.exports?.[subpath];
    if (target === undefined) {
        // A "./*" pattern, as in @modelcontextprotocol/sdk's exports.
        const pattern = manifest.exports?.['./*'];
        const rest = subpath.slice(2);
        target = pattern && JSON.parse(JSON.stringify(pattern).replaceAll('*', rest));
    }
    const entry = typeof target === 'string' ? target : (target?.import?.default ?? target?.import ?? target?.default);
    if (typeof entry !== 'string') {
        throw new Error(`${name} exports no ESM entry for ${subpath}`);
    }
    return import(pathToFileURL(join(root, entry)).href);
}

export function emit(line) {
    process.stdout.write(JSON.stringify(line) + '\n');
}

// What the client handed back, in a form the test can judge.
function describe(result) {
    const structured = result?.structuredContent;
    const error = structured && typeof structured === 'object' ? structured.error : undefined;
    const text = result?.content?.find?.(block => block.type === 'text')?.text;
    let textMatches = false;
    try {
        textMatches = text !== undefined && JSON.stringify(JSON.parse(text)) === JSON.stringify(structured);
    } catch {
        textMatches = false;
    }
    return {
        isError: result?.isError === true,
        code: error?.code ?? null,
        error: error ?? null,
        keys: structured && typeof structured === 'object' ? Object.keys(structured).sort() : null,
        text_matches: textMatches
    };
}

function describeException(exception) {
    return {
        name: exception?.constructor?.name ?? typeof exception,
        code: exception?.code ?? null,
        message: String(exception?.message ?? exception).slice(0, 500)
    };
}

// client: { listTools(): {tools}, callTool(name, args): CallToolResult }, may throw.
async function call(client, step, tool, args, expect) {
    const line = { step, tool, expect };
    let result;
    try {
        result = await client.callTool(tool, args);
        Object.assign(line, describe(result), { exception: null });
    } catch (exception) {
        Object.assign(line, { exception: describeException(exception) });
    }
    emit(line);
    return result?.structuredContent ?? {};
}

export async function runScenario({ connect, apiKey, viewerKey, run }) {
    const client = await connect(apiKey);
    const viewer = await connect(viewerKey);
    try {
        await steps(client, viewer, run);
        // The protocol era the client ended up speaking ("legacy" or "modern"; null: no notion).
        emit({ step: 'era', era: client.era?.() ?? null });
    } finally {
        await client.close();
        await viewer.close();
    }
}

// Like every real client, list the tools first: that is when clients compile outputSchemas.
async function listTools(client, step) {
    try {
        const listed = await client.listTools();
        emit({ step, tools: listed.tools.map(tool => tool.name), exception: null });
    } catch (exception) {
        emit({ step, tools: [], exception: describeException(exception) });
    }
}

async function steps(client, viewer, run) {
    await listTools(client, 'tools/list');
    await listTools(viewer, 'tools/list (viewer)');

    // Every tool once, with arguments the server accepts.
    const identity = await call(client, 'server_identity', 'server_identity', {}, 'success');
    const wc = identity.write_context ?? { resource: '', instance: '', project: '' };
    await call(client, 'continuity_context', 'continuity_context', { memory_limit: 5 }, 'success');
    const memoryKey = `${run}-memory`;
    const note = { write_context: wc, kind: 'note', title: `${run} note`, content: `Harness note written by ${run}.` };
    const memory = await call(client, 'memory_add', 'memory_add', { ...note, idempotency_key: memoryKey }, 'success');
    await call(client, 'memory_get', 'memory_get', { memory_id: memory.id ?? randomUUID() }, 'success');
    await call(client, 'memory_search', 'memory_search', { query: 'Harness', limit: 5 }, 'success');
    const task = await call(
        client,
        'task_create',
        'task_create',
        {
            write_context: wc,
            title: `${run} task`,
            description: 'Exercise every tool from a TypeScript client.',
            next_step: 'claim it',
            idempotency_key: `${run}-task`
        },
        'success'
    );
    const taskId = task.id ?? randomUUID();
    await call(client, 'task_get', 'task_get', { task_id: taskId }, 'success');
    await call(client, 'task_list', 'task_list', { status: 'open', limit: 10 }, 'success');
    const receipt = { session_ref: `${run}-session`, summary: 'Claimed from a TypeScript client.', tests: [{ name: 'harness', result: 'passed' }] };
    await call(
        client,
        'task_update',
        'task_update',
        { write_context: wc, task_id: taskId, expected_version: 1, status: 'in_progress', session_ref: receipt.session_ref, work_receipt: receipt },
        'success'
    );
    // The claim above holds a lease for this session: renewing it leaves the version alone.
    await call(client, 'task_heartbeat', 'task_heartbeat', { write_context: wc, task_id: taskId, session_ref: receipt.session_ref }, 'success');
    // After the claim above: the oldest ready task of the project, or {task: null} when none is.
    await call(client, 'task_claim_next', 'task_claim_next', { write_context: wc, idempotency_key: `${run}-claim` }, 'success');
    const agent = `${run}-agent`;
    await call(
        client,
        'state_put',
        'state_put',
        { write_context: wc, agent, body: `# Running summary\n\nGoal: exercise every tool (${run}).` },
        'success'
    );
    await call(client, 'state_get', 'state_get', { agent }, 'success');

    // Each pinned error code the client can provoke.
    await call(
        client,
        'stale_version',
        'task_update',
        { write_context: wc, task_id: taskId, expected_version: 1, handoff_note: 'from a stale read' },
        'stale_version'
    );
    await call(client, 'not_found', 'task_get', { task_id: randomUUID() }, 'not_found');
    await call(
        client,
        'validation_error',
        'memory_add',
        { write_context: wc, kind: 'decision', content: 'A decision with neither rationale nor source.' },
        'validation_error'
    );
    const second = await call(
        client,
        'task_create (for invalid_transition)',
        'task_create',
        { write_context: wc, title: `${run} second task`, description: 'Moved straight to done.' },
        'success'
    );
    await call(
        client,
        'invalid_transition',
        'task_update',
        { write_context: wc, task_id: second.id ?? randomUUID(), expected_version: 1, status: 'done' },
        'invalid_transition'
    );
    await call(
        client,
        'duplicate_receipt',
        'task_update',
        { write_context: wc, task_id: taskId, expected_version: 2, work_receipt: receipt },
        'duplicate_receipt'
    );
    await call(
        client,
        'idempotency_conflict',
        'memory_add',
        { ...note, content: 'Another payload under the same key.', idempotency_key: memoryKey },
        'idempotency_conflict'
    );
    await call(
        client,
        'write_context_mismatch',
        'memory_add',
        { ...note, write_context: { ...wc, instance: 'another-instance' } },
        'write_context_mismatch'
    );
    // A viewer's key: the role has no write, so the call runs and is refused as a tool error
    // (a key whose role could write but whose scopes cannot gets HTTP 403 step-up instead).
    const viewerIdentity = await call(viewer, 'server_identity (viewer)', 'server_identity', {}, 'success');
    await call(
        viewer,
        'forbidden',
        'memory_add',
        { ...note, write_context: viewerIdentity.write_context ?? wc, content: 'A viewer tries to write.' },
        'forbidden'
    );
}
