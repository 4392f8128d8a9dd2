import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ErpProxyStack } from './lib/erp-proxy-stack.ts';
import { parseStackConfig } from './lib/stack-config.ts';
const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
const stack = new ErpProxyStack(app, 'ErpProxy', { config: parseStackConfig((k) => app.node.tryGetContext(k)) });
const t = Template.fromStack(stack).toJSON();
const want = process.argv[2] ?? '';
for (const [k, v] of Object.entries(t.Resources as Record<string, {Type:string}>)) if (k.includes(want) || v.Type.includes(want)) console.log(k, JSON.stringify(v, null, 1));
