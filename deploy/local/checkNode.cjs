// Stops `npm test` and `npm run test:unit` at once, with one line, on a Node.js older than
// package.json's engines: the project's TypeScript runs through Node's type stripping, and an
// older Node fails file by file (ERR_UNKNOWN_FILE_EXTENSION). Plain CommonJS in the oldest
// syntax, so that the Node it refuses can run it.
'use strict';
var fs = require('fs');
var path = require('path');

var range = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')).engines.node;
var wanted = /^>=\s*(\d+)(?:\.(\d+))?/.exec(range);
if (!wanted) {
  process.stderr.write('efs: package.json engines.node is "' + range + '"; expected ">=MAJOR.MINOR"\n');
  process.exit(1);
}
var need = [Number(wanted[1]), Number(wanted[2] || 0)];
var have = process.versions.node.split('.').map(Number);
if (have[0] > need[0] || (have[0] === need[0] && have[1] >= need[1])) process.exit(0);

var script = process.env.npm_lifecycle_event ? 'npm run ' + process.env.npm_lifecycle_event : 'the project';
process.stderr.write(
  'efs: ' + script + ' runs on Node.js ' + range + ', and this is ' + process.version + ' (' + process.execPath + '); ' +
    '`make test` / `make test-unit` fetch it, or run: export PATH="$(bash deploy/local/node.sh):$PATH"\n'
);
process.exit(1);
