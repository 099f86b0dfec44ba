import { runServiceProcess } from '@efs/runtime';
import { telemetryModule } from './module.ts';

await runServiceProcess(telemetryModule);
