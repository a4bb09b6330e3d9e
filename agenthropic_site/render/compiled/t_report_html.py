from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'report.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'report.html')
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
    yield 'Build report · agenthropic'

def block_content(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_model = resolve('model')
    try:
        t_1 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_2 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_3 = environment.filters['sum']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'sum' found.")
    try:
        t_4 = environment.filters['thousands']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'thousands' found.")
    try:
        t_5 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield '<h1>Build report</h1>\n<section class="cards">\n  <div class="card"><span class="label">Sessions</span><span class="value">'
    yield escape(t_2(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'sessions')))
    yield '</span></div>\n  <div class="card"><span class="label">Skipped files</span><span class="value">'
    yield escape(t_2(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'skips')))
    yield '</span></div>\n  <div class="card"><span class="label">Failed sessions</span><span class="value">'
    yield escape(t_2(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'failures')))
    yield '</span></div>\n  <div class="card"><span class="label">Replayed messages</span><span class="value">'
    yield escape(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'collisions'))
    yield '</span></div>\n</section>\n<section>\n<h2>Unpriced models</h2>\n'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'unpriced_models'):
        pass
        yield '<ul>'
        l_1_loop = missing
        for (l_1_reason, l_1_ids), l_1_loop in LoopContext(context.call(environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'unpriced_models'), 'items'), _block_vars=_block_vars), undefined):
            _loop_vars = {}
            pass
            yield '<li>'
            yield escape(l_1_reason)
            yield ': '
            l_2_loop = missing
            for l_2_sid, l_2_loop in LoopContext(l_1_ids, undefined):
                l_2_root = resolve('root')
                _loop_vars = {}
                pass
                yield '<a href="'
                yield escape((undefined(name='root') if l_2_root is missing else l_2_root))
                yield 'sessions/'
                yield escape(l_2_sid)
                yield '/index.html">'
                yield escape(l_2_sid)
                yield '</a>'
                if (not environment.getattr(l_2_loop, 'last')):
                    pass
                    yield ', '
            l_2_loop = l_2_sid = l_2_root = missing
            yield '</li>'
        l_1_loop = l_1_reason = l_1_ids = missing
        yield '</ul>\n'
    else:
        pass
        yield '<p>Every request was priced.</p>'
    yield '</section>\n<section>\n<h2>What the totals cannot know</h2>\n'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'unknown_spend'):
        pass
        yield '<p>The cost totals leave out '
        yield escape(t_1(context.eval_ctx, environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'unknown_spend'), '; '))
        yield '.</p>'
    else:
        pass
        yield '<p>Every billed request in the transcripts is counted and priced.</p>'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'reported_agents'):
        pass
        yield '<p>'
        yield escape(t_4(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'reported_agents')))
        yield ' agent(s) ran without a transcript in the corpus (their files were not kept or not copied). Their spawners report '
        yield escape(t_4(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'reported_tokens')))
        yield ' tokens for their last requests; that is shown apart as reported, not counted, and their whole spend is unknown here.</p>'
    if environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'under_reported'), 'requests'):
        pass
        yield '<p>'
        yield escape(t_4(environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'under_reported'), 'requests')))
        yield ' request(s) in '
        yield escape(t_4(environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'under_reported'), 'sessions')))
        yield ' session(s) end on a streaming placeholder output count: Claude Code '
        yield escape((t_1(context.eval_ctx, environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'under_reported'), 'versions'), ', ') or '(version not recorded)'))
        yield ' wrote the final count only on some lines. Their output tokens are counted as recorded, so output is under-reported there; each session page gives a rough estimate of what went unrecorded.</p>'
    yield '</section>\n<section>\n<h2>Failed sessions</h2>\n'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'failures'):
        pass
        yield '<table><thead><tr><th>Session</th><th>Project</th><th>Reason</th><th class="num">Failures in a row</th></tr></thead><tbody>\n'
        for l_1_f in environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'failures'):
            _loop_vars = {}
            pass
            yield '<tr><td><code>'
            yield escape(environment.getattr(l_1_f, 'session_id'))
            yield '</code></td><td>'
            yield escape(environment.getattr(l_1_f, 'project'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_f, 'reason'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_f, 'consecutive'))
            if environment.getattr(l_1_f, 'quarantined'):
                pass
                yield ' (quarantined: read again when its files change)'
            yield '</td></tr>'
        l_1_f = missing
        yield '</tbody></table>\n'
    else:
        pass
        yield '<p>None.</p>'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'unlisted'):
        pass
        yield '<p class="banner warn">These project folders could not be listed this time; their sessions were kept from the last build: '
        yield escape(t_1(context.eval_ctx, environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'unlisted'), ', '))
        yield '</p>'
    yield '</section>\n<section>\n<h2>Hook events</h2>\n'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'hook_events'):
        pass
        yield "<p>Events received from Claude Code's hooks (they only ever move an agent's status):</p>\n<ul>"
        for (l_1_name, l_1_count) in context.call(environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'hook_events'), 'items'), _block_vars=_block_vars):
            _loop_vars = {}
            pass
            yield '<li><code>'
            yield escape(l_1_name)
            yield '</code>: '
            yield escape(t_4(l_1_count))
            yield '</li>'
        l_1_name = l_1_count = missing
        yield '</ul>\n'
    else:
        pass
        yield '<p>None: without hooks, agents show <code>working</code> until their transcript goes quiet, then <code>unknown</code>. See <code>agenthropic hooks install</code>.</p>'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'spool_bad_lines'):
        pass
        yield '<p class="banner warn">'
        yield escape(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'spool_bad_lines'))
        yield ' spool line(s) could not be read (cut short by a crash, or not hook records).</p>'
    yield '</section>\n<section>\n<h2>Secrets</h2>\n'
    if t_5(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'redactions')):
        pass
        yield '<p>Not masked: the pages and JSON show the transcripts as they are, with any API key, token or private key the agents saw. Build with <code>--redact</code> to mask them; <code>agenthropic snapshot</code> masks them by default.</p>\n'
    elif t_3(environment, context.call(environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'redactions'), 'values'), _block_vars=_block_vars)):
        pass
        yield '<p>Masked with <code>--redact</code>, by kind (a secret shown in several places counts once for each; what was masked is never kept):</p>\n<ul>'
        def t_6(fiter):
            for (l_1_kind, l_1_count) in fiter:
                if l_1_count:
                    yield (l_1_kind, l_1_count)
        for (l_1_kind, l_1_count) in t_6(context.call(environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'redactions'), 'items'), _block_vars=_block_vars)):
            _loop_vars = {}
            pass
            yield '<li><code>'
            yield escape(l_1_kind)
            yield '</code>: '
            yield escape(t_4(l_1_count))
            yield '</li>'
        l_1_kind = l_1_count = missing
        yield '</ul>\n'
    else:
        pass
        yield '<p>Built with <code>--redact</code>: no credential shape was found.</p>'
    yield '</section>\n<section>\n<h2>Skipped files</h2>\n'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'skips'):
        pass
        yield '<table class="sortable"><thead><tr><th>Path</th><th>Reason</th><th>Detail</th><th class="num">Bytes</th></tr></thead><tbody>\n'
        for l_1_skip in environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'skips'):
            _loop_vars = {}
            pass
            yield '<tr><td><code>'
            yield escape(environment.getattr(l_1_skip, 'path'))
            yield '</code></td><td>'
            yield escape(environment.getattr(l_1_skip, 'reason'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_skip, 'detail'))
            yield '</td><td class="num" data-sort="'
            yield escape((environment.getattr(l_1_skip, 'size') if (not t_5(environment.getattr(l_1_skip, 'size'))) else ''))
            yield '">'
            yield escape((t_4(environment.getattr(l_1_skip, 'size')) if (not t_5(environment.getattr(l_1_skip, 'size'))) else '—'))
            yield '</td></tr>'
        l_1_skip = missing
        yield '</tbody></table>\n'
    else:
        pass
        yield '<p>None.</p>'
    yield '</section>\n'

blocks = {'title': block_title, 'content': block_content}
debug_info = '1=12&2=17&3=27&6=67&7=69&8=71&9=73&13=75&14=79&19=108&20=116&21=123&25=133&27=136&30=156&34=162&36=165&38=178&42=184&44=187&46=190&51=208&53=211'