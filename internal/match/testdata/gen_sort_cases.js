// Generates sort_cases.json: arrays sorted as Mountebank 2.9.1's predicates.js sorts them
// (Array#sort on Node 20, V8's TimSort, with its sortObjects comparator: objects compared by
// safe-stable-stringify, anything else with <, answering -1 when less and 1 otherwise), the
// ground truth TestSortJSAgreesWithNode compares sortJS against.
//   NODE_PATH=.../mountebank/node_modules node gen_sort_cases.js > sort_cases.json
'use strict';
const stringify = require('safe-stable-stringify');

function isObject(v) { return typeof v === 'object' && v !== null; }
function compare(a, b) {
    if (isObject(a) && isObject(b)) { return compare(stringify(a), stringify(b)); }
    return a < b ? -1 : 1;
}

let seed = 17;
function rnd(n) { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; }
const scalars = [null, true, false, 0, 1, -1, 2, 10, 1.5, '', '1', '10', '2', 'a', 'B', 'b', 'é', 'ë', '😀', '\uffff',
    '1,2', '[object Object]', 'null', 'true', ' 1 '];
function value(depth) {
    const k = rnd(10);
    if (depth < 2 && k < 2) { return Array.from({ length: rnd(4) }, () => value(depth + 1)); }
    if (depth < 2 && k < 3) {
        const o = {};
        for (let i = rnd(3); i > 0; i--) { o[['a', 'b', 'B', '1'][rnd(4)]] = value(depth + 1); }
        return o;
    }
    return scalars[rnd(scalars.length)];
}

const cases = [];
for (let i = 0; i < 1200; i++) {
    // Mixed values below 64 (one TimSort run); above, values of one kind the comparator orders
    // consistently (the mixed ones from 64 up follow).
    const long = i % 8 === 7;
    const n = long ? 64 + rnd(60) : rnd(20 + (i % 3) * 20);
    const kind = rnd(3);
    const input = Array.from({ length: n }, () => {
        if (!long) { return value(0); }
        if (kind === 0) { return rnd(50); }
        if (kind === 1) { return ['a', 'b', 'c', 'é', '😀', '\uffff'][rnd(6)] + rnd(5); }
        return { k: rnd(30) };
    });
    cases.push({ in: input, out: input.slice().sort(compare) });
}
// Then mixed values from 64 up (several runs merged, with galloping): random, and made of
// stretches the comparator orders (sorted, some reversed) so that one run keeps winning.
for (let i = 0; i < 120; i++) {
    const n = 64 + rnd(256);
    let input;
    if (i % 2 === 0) {
        input = Array.from({ length: n }, () => value(0));
    } else {
        input = [];
        while (input.length < n) {
            const chunk = Array.from({ length: 1 + rnd(40) }, () => scalars[rnd(scalars.length)]).sort(compare);
            if (rnd(3) === 0) { chunk.reverse(); }
            input.push(...chunk);
        }
        input.length = n;
    }
    cases.push({ in: input, out: input.slice().sort(compare) });
}
process.stdout.write(JSON.stringify(cases) + '\n');
