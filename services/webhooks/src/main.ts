import { runServiceProcess } from '@efs/runtime';
import { webhooksModule } from './module.ts';

await runServiceProcess(webhooksModule);
