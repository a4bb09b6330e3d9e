from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'base.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_version = resolve('version')
    l_0_root = resolve('root')
    l_0_model = resolve('model')
    try:
        t_1 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    pass
    yield '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; script-src \'self\'; style-src \'self\'; img-src \'self\' data:; connect-src \'self\'; base-uri \'none\'; form-action \'none\'">\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n<meta name="generator" content="agenthropic '
    yield escape((undefined(name='version') if l_0_version is missing else l_0_version))
    yield '">\n<title>'
    yield from context.blocks['title'][0](context)
    yield '</title>\n<link rel="icon" href="data:,">\n<link rel="stylesheet" href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'static/style.css">\n<script src="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'static/site.js" defer></script>\n'
    yield from context.blocks['head'][0](context)
    yield '</head>\n<body data-root="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield '">\n<header class="top">\n  <a class="brand" href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'index.html">agenthropic</a>\n  <nav aria-label="Site">\n    <a href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'index.html">Projects</a>\n    <a href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'search.html">Search</a>\n    <a href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'report.html">Build report</a>\n  </nav>\n</header>\n<main>\n'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'lower_bound'):
        pass
        yield '<p class="banner warn" role="alert">Cost totals are a lower bound: they leave out '
        yield escape(t_1(context.eval_ctx, environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'unknown_spend'), '; '))
        yield '. See the <a href="'
        yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
        yield 'report.html">build report</a>.</p>\n'
    yield from context.blocks['content'][0](context)
    yield '</main>\n<footer>Built by agenthropic '
    yield escape((undefined(name='version') if l_0_version is missing else l_0_version))
    yield ' from the transcripts Claude Code writes. Times are in <span class="tz">'
    yield escape(environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'usage'), 'tz'))
    yield '</span>.</footer>\n</body>\n</html>\n'

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield 'agenthropic'

def block_head(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass

def block_content(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass

blocks = {'title': block_title, 'head': block_head, 'content': block_content}
debug_info = '7=21&8=23&10=25&11=27&12=29&14=31&16=33&18=35&19=37&20=39&24=41&25=44&27=48&29=50&8=55&12=65&27=74'