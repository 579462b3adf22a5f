'use strict';
// Filled in by its issue.
module.exports = {};
