from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'search.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'search.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield 'Search · agenthropic'

def block_content(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_root = resolve('root')
    pass
    yield '<h1>Search every transcript</h1>\n<p class="no-js banner">Search runs in your browser and needs JavaScript. Every session\'s transcript is linked from the <a href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'index.html">index</a>.</p>\n<form class="search-form js-only" id="full-search" role="search">\n  <label for="q">Words to find</label>\n  <input id="q" name="q" type="search" autocomplete="off" spellcheck="false" placeholder="every word must occur">\n  <button type="submit">Search</button>\n</form>\n<p class="sub js-only">Prompts, answers, tool inputs and outputs and thinking of every session, case-insensitive; every word must occur in the same entry. It works offline, from the files alone.</p>\n<p id="search-status" class="sub" role="status" aria-live="polite"></p>\n<ol id="search-results" class="search-results"></ol>\n<script src="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'static/search.js" defer></script>\n'

blocks = {'title': block_title, 'content': block_content}
debug_info = '1=12&2=17&3=27&5=37&14=39'