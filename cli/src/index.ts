export { startSystem, type System } from './allInOne.ts';
export { credentialCommand, revokeSigningKeyCommand, rotateSigningKeyCommand, type CliIo } from './credentials.ts';
export { openAdrClientCommand } from './openadr.ts';
export { portalCommand } from './portal.ts';
export { portalOidcCommand } from './portalOidc.ts';
export { allModules } from './modules.ts';
